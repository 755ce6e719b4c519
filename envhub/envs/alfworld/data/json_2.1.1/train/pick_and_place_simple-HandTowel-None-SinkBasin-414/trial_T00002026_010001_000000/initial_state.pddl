
(define (problem plan_trial_T00002026_010001_000000)
    (:domain alfred)
    (:objects
        agent1 - agent
        HandTowel_bar__plus_02_dot_97_bar__plus_01_dot_69_bar__minus_02_dot_80 - object
        ToiletPaper_bar__plus_02_dot_46_bar__plus_00_dot_36_bar__plus_01_dot_20 - object
        SoapBar_bar__minus_01_dot_67_bar__plus_01_dot_30_bar__plus_02_dot_70 - object
        DishSponge_bar__plus_01_dot_80_bar__plus_00_dot_47_bar__plus_01_dot_81 - object
        SprayBottle_bar__minus_00_dot_81_bar__plus_00_dot_89_bar__plus_00_dot_35 - object
        DishSpongeType - otype
        HandTowelType - otype
        SoapBarType - otype
        SprayBottleType - otype
        ToiletPaperType - otype
        BathtubBasinType - rtype
        CabinetType - rtype
        CounterTopType - rtype
        SinkBasinType - rtype
        ToiletType - rtype
        Bathtub_bar__minus_00_dot_44_bar__plus_00_dot_18_bar__plus_01_dot_58_bar_BathtubBasin - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_01_dot_59 - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_04 - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_86 - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_91 - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_03_dot_57 - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_02_dot_91 - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_03_dot_57 - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_02_dot_91 - receptacle
        Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_03_dot_57 - receptacle
        CounterTop_bar__minus_02_dot_61_bar__plus_01_dot_24_bar__plus_01_dot_46 - receptacle
        CounterTop_bar__minus_02_dot_69_bar__plus_00_dot_97_bar__plus_02_dot_26 - receptacle
        Sink_bar__minus_02_dot_72_bar__plus_00_dot_86_bar__plus_02_dot_23_bar_SinkBasin - receptacle
        Toilet_bar__minus_02_dot_58_bar__plus_00_dot_03_bar__plus_00_dot_66 - receptacle
        loc_bar_0_bar_0_bar_0_bar_30 - location
        loc_bar__minus_4_bar_11_bar_2_bar_30 - location
        loc_bar__minus_6_bar_11_bar_3_bar_30 - location
        loc_bar__minus_6_bar_12_bar_3_bar_30 - location
        loc_bar__minus_6_bar_7_bar_3_bar_30 - location
        loc_bar__minus_6_bar_9_bar_3_bar_30 - location
        loc_bar__minus_7_bar_12_bar_3_bar_30 - location
        loc_bar__minus_7_bar_12_bar_3_bar__minus_30 - location
        loc_bar__minus_8_bar_10_bar_3_bar_30 - location
        loc_bar__minus_8_bar_5_bar_3_bar_30 - location
        loc_bar__minus_8_bar_9_bar_3_bar_30 - location
        )
    (:init
        (atLocation agent1 loc_bar_0_bar_0_bar_0_bar_30)
        (receptacleType Bathtub_bar__minus_00_dot_44_bar__plus_00_dot_18_bar__plus_01_dot_58_bar_BathtubBasin BathtubBasinType)
        (receptacleAtLocation Bathtub_bar__minus_00_dot_44_bar__plus_00_dot_18_bar__plus_01_dot_58_bar_BathtubBasin loc_bar__minus_4_bar_11_bar_2_bar_30)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_01_dot_59 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_01_dot_59 loc_bar__minus_6_bar_9_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_01_dot_59)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_04 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_04 loc_bar__minus_6_bar_7_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_04)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_86 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_86 loc_bar__minus_6_bar_9_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_86)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_91 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_91 loc_bar__minus_6_bar_11_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_91)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_03_dot_57 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_03_dot_57 loc_bar__minus_6_bar_12_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_03_dot_57)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_02_dot_91 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_02_dot_91 loc_bar__minus_7_bar_12_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_02_dot_91)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_03_dot_57 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_03_dot_57 loc_bar__minus_6_bar_12_bar_3_bar_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_03_dot_57)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_02_dot_91 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_02_dot_91 loc_bar__minus_7_bar_12_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_02_dot_91)
        (receptacleType Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_03_dot_57 CabinetType)
        (receptacleAtLocation Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_03_dot_57 loc_bar__minus_7_bar_12_bar_3_bar__minus_30)
        (openable Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_03_dot_57)
        (receptacleType CounterTop_bar__minus_02_dot_61_bar__plus_01_dot_24_bar__plus_01_dot_46 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_02_dot_61_bar__plus_01_dot_24_bar__plus_01_dot_46 loc_bar__minus_8_bar_5_bar_3_bar_30)
        (receptacleType CounterTop_bar__minus_02_dot_69_bar__plus_00_dot_97_bar__plus_02_dot_26 CounterTopType)
        (receptacleAtLocation CounterTop_bar__minus_02_dot_69_bar__plus_00_dot_97_bar__plus_02_dot_26 loc_bar__minus_8_bar_10_bar_3_bar_30)
        (receptacleType Sink_bar__minus_02_dot_72_bar__plus_00_dot_86_bar__plus_02_dot_23_bar_SinkBasin SinkBasinType)
        (receptacleAtLocation Sink_bar__minus_02_dot_72_bar__plus_00_dot_86_bar__plus_02_dot_23_bar_SinkBasin loc_bar__minus_8_bar_9_bar_3_bar_30)
        (receptacleType Toilet_bar__minus_02_dot_58_bar__plus_00_dot_03_bar__plus_00_dot_66 ToiletType)
        (receptacleAtLocation Toilet_bar__minus_02_dot_58_bar__plus_00_dot_03_bar__plus_00_dot_66 loc_bar__minus_8_bar_5_bar_3_bar_30)
        (canContain BathtubBasinType DishSpongeType)
        (canContain BathtubBasinType HandTowelType)
        (canContain BathtubBasinType SoapBarType)
        (canContain CabinetType DishSpongeType)
        (canContain CabinetType HandTowelType)
        (canContain CabinetType SoapBarType)
        (canContain CabinetType SprayBottleType)
        (canContain CabinetType ToiletPaperType)
        (canContain CounterTopType DishSpongeType)
        (canContain CounterTopType HandTowelType)
        (canContain CounterTopType SoapBarType)
        (canContain CounterTopType SprayBottleType)
        (canContain CounterTopType ToiletPaperType)
        (canContain SinkBasinType DishSpongeType)
        (canContain SinkBasinType HandTowelType)
        (canContain SinkBasinType SoapBarType)
        (canContain ToiletType DishSpongeType)
        (canContain ToiletType HandTowelType)
        (canContain ToiletType SoapBarType)
        (canContain ToiletType SprayBottleType)
        (canContain ToiletType ToiletPaperType)
        (objectType HandTowel_bar__plus_02_dot_97_bar__plus_01_dot_69_bar__minus_02_dot_80 HandTowelType)
        (inReceptacle HandTowel_bar__plus_02_dot_97_bar__plus_01_dot_69_bar__minus_02_dot_80 Cabinet_bar__minus_02_dot_41_bar__plus_02_dot_02_bar__plus_02_dot_91)
        (objectAtLocation HandTowel_bar__plus_02_dot_97_bar__plus_01_dot_69_bar__minus_02_dot_80 loc_bar__minus_7_bar_12_bar_3_bar__minus_30)
        (pickupable HandTowel_bar__plus_02_dot_97_bar__plus_01_dot_69_bar__minus_02_dot_80)
        (objectType ToiletPaper_bar__plus_02_dot_46_bar__plus_00_dot_36_bar__plus_01_dot_20 ToiletPaperType)
        (inReceptacle ToiletPaper_bar__plus_02_dot_46_bar__plus_00_dot_36_bar__plus_01_dot_20 Cabinet_bar__minus_02_dot_41_bar__plus_01_dot_26_bar__plus_02_dot_91)
        (objectAtLocation ToiletPaper_bar__plus_02_dot_46_bar__plus_00_dot_36_bar__plus_01_dot_20 loc_bar__minus_7_bar_12_bar_3_bar_30)
        (pickupable ToiletPaper_bar__plus_02_dot_46_bar__plus_00_dot_36_bar__plus_01_dot_20)
        (objectType SoapBar_bar__minus_01_dot_67_bar__plus_01_dot_30_bar__plus_02_dot_70 SoapBarType)
        (inReceptacle SoapBar_bar__minus_01_dot_67_bar__plus_01_dot_30_bar__plus_02_dot_70 Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_02_dot_91)
        (objectAtLocation SoapBar_bar__minus_01_dot_67_bar__plus_01_dot_30_bar__plus_02_dot_70 loc_bar__minus_6_bar_11_bar_3_bar_30)
        (pickupable SoapBar_bar__minus_01_dot_67_bar__plus_01_dot_30_bar__plus_02_dot_70)
        (cleanable SoapBar_bar__minus_01_dot_67_bar__plus_01_dot_30_bar__plus_02_dot_70)
        (objectType DishSponge_bar__plus_01_dot_80_bar__plus_00_dot_47_bar__plus_01_dot_81 DishSpongeType)
        (inReceptacle DishSponge_bar__plus_01_dot_80_bar__plus_00_dot_47_bar__plus_01_dot_81 Cabinet_bar__minus_02_dot_41_bar__plus_00_dot_37_bar__plus_03_dot_57)
        (objectAtLocation DishSponge_bar__plus_01_dot_80_bar__plus_00_dot_47_bar__plus_01_dot_81 loc_bar__minus_6_bar_12_bar_3_bar_30)
        (pickupable DishSponge_bar__plus_01_dot_80_bar__plus_00_dot_47_bar__plus_01_dot_81)
        (cleanable DishSponge_bar__plus_01_dot_80_bar__plus_00_dot_47_bar__plus_01_dot_81)
        (objectType SprayBottle_bar__minus_00_dot_81_bar__plus_00_dot_89_bar__plus_00_dot_35 SprayBottleType)
        (inReceptacle SprayBottle_bar__minus_00_dot_81_bar__plus_00_dot_89_bar__plus_00_dot_35 CounterTop_bar__minus_02_dot_69_bar__plus_00_dot_97_bar__plus_02_dot_26)
        (objectAtLocation SprayBottle_bar__minus_00_dot_81_bar__plus_00_dot_89_bar__plus_00_dot_35 loc_bar__minus_8_bar_10_bar_3_bar_30)
        (pickupable SprayBottle_bar__minus_00_dot_81_bar__plus_00_dot_89_bar__plus_00_dot_35)
        )

        (:goal
            (and
                (exists (?r - receptacle)
                    (exists (?o - object)
                        (and
                            (inReceptacle ?o ?r)
                            (objectType ?o HandTowelType)
                            (receptacleType ?r SinkBasinType)
                        )
                    )
                )
            )
        )
    )
    
